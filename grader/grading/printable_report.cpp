// Where the text of a grade becomes the report's: a grade quotes what the
// submission controls (the compiler's messages about its code, what its program
// printed, what compute-sanitizer and ncu said of it, names read from its PTX),
// and every way a report is shown (the terminal, --json, a batch's CSV, JUnit XML
// and Gradescope files) is made from the GradeReport that LabGrader::run hands
// out. So each text is made printable once, here, rather than by each writer.
#include "grading.hpp"
#include "printable.hpp"

using nlohmann::json;

namespace grader {
namespace {

void printable_in_place(std::string& s) { s = printable(s); }

void printable_json(json& j) {
  if (j.is_string()) {
    printable_in_place(j.get_ref<std::string&>());
  } else if (j.is_array()) {
    for (auto& v : j) printable_json(v);
  } else if (j.is_object()) {
    json out = json::object();
    for (auto& [key, value] : j.items()) {
      json v = std::move(value);
      printable_json(v);
      out[printable(key)] = std::move(v);
    }
    j = std::move(out);
  }
}

}  // namespace

void make_printable(GradeReport& r) {
  for (std::string* s :
       {&r.lab_folder, &r.lab_id, &r.title, &r.submission, &r.arch, &r.program_output, &r.student_build.stage,
        &r.student_build.diagnostics, &r.student_build.kernel.diagnostics, &r.student_build.kernel.ptxas_log})
    printable_in_place(*s);
  for (auto& note : r.notes) printable_in_place(note);
  for (auto& step : r.steps) {
    printable_in_place(step.title);
    printable_in_place(step.symptom_hint);
    for (auto& c : step.checks) {
      printable_in_place(c.summary);
      for (auto& d : c.details) printable_in_place(d);
      printable_json(c.data);
    }
  }
}

}  // namespace grader
