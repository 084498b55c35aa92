// How a grade is shown: a short, scannable report for the student, or the
// documented JSON schema (docs/json-output.md) for scripts.
#include <cstdio>
#include <iostream>

#include "app.hpp"
#include "grading.hpp"
#include "terminal.hpp"

using nlohmann::json;

namespace grader {
namespace {

json check_json(const CheckResult& c) {
  return {{"kind", c.kind}, {"status", c.status}, {"summary", c.summary},
          {"details", c.details}, {"symptom", c.symptom}, {"data", c.data}};
}

json build_json(const RunnerBuild& b) {
  return {{"ok", b.ok}, {"cached", b.cached}, {"seconds", b.seconds}, {"stage", b.stage},
          {"diagnostics", b.diagnostics}};
}

std::string mark(const std::string& status) {
  if (status == "pass") return Style::pass_mark();
  if (status == "fail") return Style::fail_mark();
  if (status == "skipped") return Style::skip_mark();
  return Style::dim("·");
}

std::string indent(const std::string& text, const std::string& pad) {
  std::string out = pad;
  for (char ch : text) {
    out += ch;
    if (ch == '\n') out += pad;
  }
  while (!out.empty() && (out.back() == ' ')) out.pop_back();
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace

json report_to_json(const GradeReport& r) {
  json steps = json::array();
  for (const auto& s : r.steps) {
    json checks = json::array();
    for (const auto& c : s.checks) checks.push_back(check_json(c));
    steps.push_back({{"id", s.id}, {"title", s.title}, {"points", s.points}, {"status", s.status}, {"checks", checks},
                     {"symptom_hint", s.symptom_hint}});
  }
  json device = nullptr;
  if (r.device.present)
    device = {{"name", r.device.name}, {"arch", r.device.arch}, {"sms", r.device.sms},
              {"driver", cuda_version_string(r.device.driver_version)}};
  return {{"schema", "cuda-memory-labs/grade/1"},
          {"lab", r.lab_folder},
          {"title", r.title},
          {"submission", r.submission},
          {"seed", r.seed},
          {"arch", r.arch},
          {"gpu", device},
          {"no_gpu_reason", r.device.present ? "" : r.device.reason},
          {"build", {{"student", build_json(r.student_build)}, {"reference", [&] {
                      json b = build_json(r.reference_build);
                      b["origin"] = r.reference_origin;
                      return b;
                    }()}}},
          {"steps", steps},
          {"current_step", r.current_step ? json(*r.current_step) : json(nullptr)},
          {"passed", r.exit_code == kExitPass},
          {"notes", r.notes},
          {"program_output", r.program_output},
          {"seconds", r.seconds},
          {"exit_code", r.exit_code}};
}

void print_report(const GradeReport& r, bool verbose) {
  std::cout << Style::bold(r.lab_folder) << "  " << r.title << "\n";
  std::cout << Style::dim("  " + (r.device.present ? r.device.name + " (" + r.arch + ")" : "no GPU, building for " + r.arch) +
                          " · seed " + std::to_string(r.seed))
            << "\n";
  if (!r.student_build.ok) {
    std::cout << "\n  " << Style::fail_mark() << " " << Style::bold("kernel.cu does not build") << " ("
              << r.student_build.stage << ")\n\n"
              << indent(r.student_build.diagnostics, "    ") << "\n";
  }
  for (const auto& s : r.steps) {
    std::cout << "\n  " << mark(s.status) << " " << Style::bold("step " + std::to_string(s.id)) << "  " << s.title;
    if (s.status == "locked") std::cout << Style::dim("  (locked: pass the steps before it)");
    std::cout << "\n";
    for (const auto& c : s.checks) {
      std::cout << "      " << mark(c.status) << " " << Style::dim(c.kind + ":") << " " << c.summary << "\n";
      for (const auto& d : c.details) std::cout << "          " << Style::dim(d) << "\n";
    }
    if (!s.symptom_hint.empty()) std::cout << "      " << Style::yellow("→ ") << s.symptom_hint << "\n";
  }
  if (!r.program_output.empty()) {
    std::cout << "\n  " << Style::bold("your program printed:") << "\n" << indent(r.program_output, "    | ") << "\n";
  }
  for (const auto& n : r.notes) std::cout << "\n  " << Style::yellow("note: ") << n << "\n";
  std::cout << "\n";
  if (r.exit_code == kExitPass) {
    std::cout << "  " << Style::green("All steps pass.") << "\n";
  } else if (r.current_step) {
    std::cout << "  Current step: " << *r.current_step << ".  Stuck? " << Style::bold("grader hint " + r.lab_id) << "\n";
  }
  if (verbose)
    std::cout << Style::dim("  build " + std::string(r.student_build.cached ? "cached" : "fresh") + ", " +
                            std::to_string(r.seconds).substr(0, 5) + " s in all")
              << "\n";
}

}  // namespace grader
