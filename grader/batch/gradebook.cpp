#include "gradebook.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "text.hpp"

using nlohmann::json;

namespace grader {
namespace {

const StepResult* report_step(const BatchRow& row, std::size_t i) {
  if (!row.report) return nullptr;
  return i < row.report->steps.size() ? &row.report->steps[i] : nullptr;
}

bool build_failed(const BatchRow& row) { return row.report && !row.report->student_build.ok; }

std::string build_failure(const BatchRow& row) {
  const RunnerBuild& b = row.report->student_build;
  const std::string diag = first_line(b.diagnostics);
  return "build failed" + (b.stage.empty() ? "" : " (" + b.stage + ")") + (diag.empty() ? "" : ": " + diag);
}

// One line per check, for Gradescope's output and JUnit's failure text.
std::string check_lines(const StepResult& step) {
  std::string out;
  for (const auto& c : step.checks) {
    out += name_of(c.status) + " " + name_of(c.kind) + ": " + c.summary + "\n";
    for (const auto& d : c.details) out += "    " + d + "\n";
  }
  return out;
}

// The first check of a step with this status (failed, or skipped).
const CheckResult* first_check_with(const StepResult& step, Outcome status) {
  for (const auto& c : step.checks)
    if (c.status == status) return &c;
  return nullptr;
}

// Its summary, after its kind.
std::string failing_summary(const StepResult& step, Outcome status) {
  const CheckResult* c = first_check_with(step, status);
  return c ? name_of(c->kind) + ": " + c->summary : "";
}

std::string step_name(const Step& s) { return "step " + std::to_string(s.id) + ": " + s.title; }

}  // namespace

GradebookInfo GradebookInfo::from_manifest(const Manifest& m, const std::string& lab_folder) {
  GradebookInfo g;
  g.lab_id = m.id;
  g.lab_folder = lab_folder;
  g.title = m.title;
  g.steps = m.steps;
  return g;
}

double GradebookInfo::total_points() const {
  double t = 0;
  for (const auto& s : steps) t += s.points;
  return t;
}

std::vector<TimedColumn> timed_columns(const GradebookInfo& info) {
  std::vector<TimedColumn> cols;
  for (std::size_t i = 0; i < info.steps.size(); ++i)
    for (std::size_t k = 0; k < info.steps[i].checks.size(); ++k) {
      const Check& c = info.steps[i].checks[k];
      if (is_timed_kind(c.kind))
        cols.push_back(
            {i, k, "step " + std::to_string(info.steps[i].id) + " " + name_of(c.kind) + " " + c.case_name, c.kind});
    }
  return cols;
}

std::optional<Outcome> step_status(const BatchRow& row, std::size_t i) {
  const StepResult* s = report_step(row, i);
  return s ? std::optional<Outcome>(s->status) : std::nullopt;
}

double earned_points(const BatchRow& row, const GradebookInfo& info) {
  double p = 0;
  for (std::size_t i = 0; i < info.steps.size(); ++i)
    if (step_status(row, i) == Outcome::pass) p += info.steps[i].points;
  return p;
}

std::string self_reported_hints_note(double hint_penalty) {
  if (!(hint_penalty > 0)) return "";
  return "hints_used is self-reported: it is read from each upload's own .grader/progress.json, which the student "
         "can edit or delete, so the hint penalty is on the honour system (docs/security.md)";
}

double final_score(double earned, int hints, double penalty) {
  return std::max(0.0, earned - std::max(0.0, penalty) * std::max(0, hints));
}

double timed_value(const BatchRow& row, const TimedColumn& col) {
  const double none = std::numeric_limits<double>::quiet_NaN();
  const StepResult* s = report_step(row, col.step_index);
  if (!s || col.check_index >= s->checks.size()) return none;
  const json& data = s->checks[col.check_index].data;  // a timed check's: the timing session, by its ratios' names
  const std::string key = memlabs::name_of(timed_ratio(col.kind));
  if (!data.is_object() || !data.contains(key) || !data[key].is_object()) return none;
  const json& m = data[key].value("median", json());
  return m.is_number() ? m.get<double>() : none;
}

std::string csv_field(const std::string& text, bool is_text) {
  std::string t = text;
  if (is_text && !t.empty() && (t[0] == '=' || t[0] == '+' || t[0] == '-' || t[0] == '@')) t = "'" + t;
  const bool quote =
      t.find_first_of(",\"\r\n") != std::string::npos || (!t.empty() && (t.front() == ' ' || t.back() == ' '));
  if (!quote) return t;
  std::string q = "\"";
  for (char c : t) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string format_number(double v, int max_decimals) {
  if (!std::isfinite(v)) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", max_decimals, v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // XML 1.0 has no way to write other control characters, not even escaped.
        out += (c < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') ? '?' : ch;
    }
  }
  return out;
}

std::string row_notes(const BatchRow& row, const GradebookInfo& info) {
  if (row.status == RowStatus::rejected) return "rejected: " + row.reason;
  if (row.status == RowStatus::error || row.status == RowStatus::not_graded) return "not graded: " + row.reason;
  std::vector<std::string> notes;
  if (build_failed(row)) notes.push_back(build_failure(row));
  bool skipped = false;
  for (std::size_t i = 0; i < info.steps.size(); ++i) skipped = skipped || step_status(row, i) == Outcome::skipped;
  if (skipped) {
    const std::string why = row.report && !row.report->device.present ? row.report->device.reason : "";
    notes.push_back("GPU checks skipped" + (why.empty() ? std::string() : " (" + first_line(why) + ")"));
  }
  if (row.report && row.report->current_step && !skipped)
    notes.push_back("stopped at step " + std::to_string(*row.report->current_step));
  if (row.report && row.report->exit_code == kExitPass) notes.push_back("all steps pass");
  std::string s;
  for (const auto& n : notes) s += (s.empty() ? "" : "; ") + n;
  return s;
}

std::string grades_csv(const std::vector<BatchRow>& rows, const GradebookInfo& info) {
  const auto cols = timed_columns(info);
  std::ostringstream os;
  os << "id";
  for (const auto& s : info.steps) os << ",step" << s.id;
  os << ",points,total";
  for (const auto& c : cols) os << "," << csv_field(c.label);
  os << ",hints_used (" << kHintsSource << "),notes\r\n";
  for (const auto& r : rows) {
    os << csv_field(r.id);
    for (std::size_t i = 0; i < info.steps.size(); ++i) os << "," << (step_status(r, i) == Outcome::pass ? 1 : 0);
    // No score at all for a row that was not graded: an empty cell, never a 0.
    os << ","
       << (r.status == RowStatus::not_graded
               ? std::string()
               : format_number(final_score(earned_points(r, info), r.hints_used, info.hint_penalty), 2))
       << "," << format_number(info.total_points(), 2);
    for (const auto& c : cols) os << "," << format_number(timed_value(r, c), 3);
    os << "," << r.hints_used << "," << csv_field(row_notes(r, info));
    os << "\r\n";
  }
  return os.str();
}

json row_json(const BatchRow& r, const GradebookInfo& info) {
  return {{"id", r.id},
          {"status", r.status},
          {"reason", r.reason},
          {"points", r.status == RowStatus::not_graded
                         ? json(nullptr)
                         : json(final_score(earned_points(r, info), r.hints_used, info.hint_penalty))},
          {"hints_used", r.hints_used},
          {"hints_source", kHintsSource},
          {"notes", row_notes(r, info)}};
}

json gradescope_result(const BatchRow& row, const GradebookInfo& info) {
  json tests = json::array();
  for (std::size_t i = 0; i < info.steps.size(); ++i) {
    const Step& st = info.steps[i];
    const std::optional<Outcome> status = step_status(row, i);
    std::string output;
    if (row.status != RowStatus::graded)
      output = row_notes(row, info);
    else if (status == Outcome::locked)
      output = "not graded: an earlier step failed";
    else if (!status)
      output = "not graded";
    else if (const StepResult* s = report_step(row, i))
      output = check_lines(*s);
    if (i == 0 && row.status == RowStatus::graded && build_failed(row)) {
      output = build_failure(row) + "\n" + row.report->student_build.diagnostics;
    }
    if (status == Outcome::skipped) output = "skipped (no points): " + output;
    tests.push_back({{"name", step_name(st)},
                     {"score", status == Outcome::pass ? st.points : 0},
                     {"max_score", st.points},
                     {"status", status == Outcome::pass ? "passed" : "failed"},
                     {"output", output},
                     {"visibility", "visible"}});
  }
  const double earned = earned_points(row, info);
  const double score = final_score(earned, row.hints_used, info.hint_penalty);
  std::string output = row_notes(row, info);
  if (info.hint_penalty > 0 && row.hints_used > 0)
    output += std::string(output.empty() ? "" : "\n") + "hint penalty: " + std::to_string(row.hints_used) + " hints (" +
              kHintsSource + ") × " + format_number(info.hint_penalty, 2) + " = " + format_number(earned - score, 2) +
              " points off";
  json extra = info.environment;
  extra["lab"] = info.lab_id;
  extra["hints_used"] = row.hints_used;
  extra["hints_source"] = kHintsSource;
  extra["hint_penalty"] = info.hint_penalty;
  if (row.report) extra["seed"] = row.report->seed;
  // Not graded (no GPU): no score and no tests, so Gradescope cannot record a 0 as a grade.
  if (row.status == RowStatus::not_graded) return {{"output", output}, {"tests", json::array()}, {"extra_data", extra}};
  return {{"score", score}, {"output", output}, {"tests", tests}, {"extra_data", extra}};
}

namespace {

// One step of one submission as a <testcase>; returns what it counts as:
// 'f' a failure, 'e' an error (the grade did not finish), 's' skipped, locked
// or not graded (no GPU, a tool's own failure), 'p' passed.
char junit_testcase(std::ostringstream& cases, const BatchRow& r, const GradebookInfo& info, std::size_t i) {
  const Step& st = info.steps[i];
  cases << "    <testcase classname=\"" << xml_escape(info.lab_id + "." + r.id) << "\" name=\""
        << xml_escape(step_name(st)) << "\" time=\"0\">\n";
  const std::optional<Outcome> status = step_status(r, i);
  const StepResult* s = report_step(r, i);
  char outcome = 'p';
  if (r.status == RowStatus::not_graded) {
    // No GPU, or a step a tool could not grade: nothing was measured, so no
    // step failed either.
    outcome = 's';
    cases << "      <skipped message=\"" << xml_escape(row_notes(r, info)) << "\"/>\n";
  } else if (r.status != RowStatus::graded) {
    outcome = 'e';
    cases << "      <error message=\"" << xml_escape(row_notes(r, info)) << "\"/>\n";
  } else if (i == 0 && build_failed(r)) {
    outcome = 'f';
    cases << "      <failure message=\"" << xml_escape(build_failure(r)) << "\" type=\"build\">"
          << xml_escape(r.report->student_build.diagnostics) << "</failure>\n";
  } else if (status == Outcome::fail) {
    outcome = 'f';
    const CheckResult* failed = first_check_with(*s, Outcome::fail);
    cases << "      <failure message=\"" << xml_escape(failing_summary(*s, Outcome::fail)) << "\" type=\""
          << xml_escape(failed ? name_of(failed->kind) : std::string()) << "\">" << xml_escape(check_lines(*s))
          << "</failure>\n";
  } else if (status == Outcome::skipped) {
    outcome = 's';
    cases << "      <skipped message=\"" << xml_escape(failing_summary(*s, Outcome::skipped)) << "\"/>\n";
  } else if (status != Outcome::pass) {
    outcome = 's';
    cases << "      <skipped message=\"locked: an earlier step failed\"/>\n";
  }
  cases << "    </testcase>\n";
  return outcome;
}

}  // namespace

std::string junit_xml(const std::vector<BatchRow>& rows, const GradebookInfo& info) {
  std::ostringstream body;
  int all_tests = 0, all_failures = 0, all_errors = 0, all_skipped = 0;
  for (const auto& r : rows) {
    int failures = 0, errors = 0, skipped = 0;
    std::ostringstream cases;
    for (std::size_t i = 0; i < info.steps.size(); ++i) {
      const char outcome = junit_testcase(cases, r, info, i);
      failures += outcome == 'f';
      errors += outcome == 'e';
      skipped += outcome == 's';
    }
    const int n = static_cast<int>(info.steps.size());
    body << "  <testsuite name=\"" << xml_escape(r.id) << "\" tests=\"" << n << "\" failures=\"" << failures
         << "\" errors=\"" << errors << "\" skipped=\"" << skipped << "\" time=\"" << format_number(r.seconds, 3)
         << "\">\n"
         << "    <properties>\n"
         << "      <property name=\"points\" value=\""
         << (r.status == RowStatus::not_graded  // empty, never 0: no grade was given
                 ? std::string()
                 : format_number(final_score(earned_points(r, info), r.hints_used, info.hint_penalty), 2))
         << "\"/>\n"
         << "      <property name=\"total\" value=\"" << format_number(info.total_points(), 2) << "\"/>\n"
         << "      <property name=\"hints_used\" value=\"" << r.hints_used << "\"/>\n"
         << "      <property name=\"hints_source\" value=\"" << kHintsSource << "\"/>\n"
         << "    </properties>\n"
         << cases.str() << "  </testsuite>\n";
    all_tests += n;
    all_failures += failures;
    all_errors += errors;
    all_skipped += skipped;
  }
  std::ostringstream os;
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"" << xml_escape(info.lab_id) << "\" tests=\""
     << all_tests << "\" failures=\"" << all_failures << "\" errors=\"" << all_errors << "\" skipped=\"" << all_skipped
     << "\">\n"
     << body.str() << "</testsuites>\n";
  return os.str();
}

}  // namespace grader
