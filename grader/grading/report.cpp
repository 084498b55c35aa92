// How a grade is shown: a short, scannable report for the student, or the
// documented JSON schema (docs/json-output.md) for scripts.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "grading.hpp"
#include "options.hpp"
#include "terminal.hpp"
#include "timing_chart.hpp"

using nlohmann::json;

namespace grader {

const std::string& name_of(Outcome outcome) {
  static const std::string names[] = {"pass", "fail", "skipped", "locked"};
  return names[static_cast<int>(outcome)];
}

void to_json(json& j, Outcome outcome) { j = name_of(outcome); }

void from_json(const json& j, Outcome& outcome) {
  for (Outcome o : {Outcome::pass, Outcome::fail, Outcome::skipped, Outcome::locked})
    if (j == name_of(o)) {
      outcome = o;
      return;
    }
  throw std::invalid_argument("not an outcome: " + j.dump());
}
namespace {

json check_json(const CheckResult& c) {
  return {{"kind", c.kind},
          {"status", c.status},
          {"summary", c.summary},
          {"details", c.details},
          {"symptom", symptom_json(c.symptom)},
          {"data", c.data},
          {"advisory", c.advisory}};
}

json build_json(const RunnerBuild& b) {
  return {
      {"ok", b.ok}, {"cached", b.cached}, {"seconds", b.seconds}, {"stage", b.stage}, {"diagnostics", b.diagnostics}};
}

std::string mark(Outcome status) {
  switch (status) {
    case Outcome::pass:
      return Style::pass_mark();
    case Outcome::fail:
      return Style::fail_mark();
    case Outcome::skipped:
      return Style::skip_mark();
    case Outcome::locked:
      break;
  }
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

bool is_timed(const CheckResult& c) { return is_timed_kind(c.kind); }

// The timing sessions to chart under each step. Checks of one case share one
// session (equal data), within a step and across steps (lab07 times one case
// for three steps), so each session is drawn once, under the last step that
// used it: the step the student is on when that one fails.
std::vector<std::vector<const json*>> charts_by_step(const GradeReport& r) {
  std::vector<std::vector<const json*>> charts(r.steps.size());
  std::vector<const json*> drawn;
  for (std::size_t i = r.steps.size(); i-- > 0;) {
    const auto& checks = r.steps[i].checks;
    for (auto c = checks.rbegin(); c != checks.rend(); ++c) {
      if (!is_timed(*c) || (c->status != Outcome::pass && c->status != Outcome::fail) || !holds_timing(c->data))
        continue;
      if (std::any_of(drawn.begin(), drawn.end(), [&](const json* d) { return *d == c->data; })) continue;
      drawn.push_back(&c->data);
      charts[i].insert(charts[i].begin(), &c->data);
    }
  }
  return charts;
}

// Why the current step is not graded on this machine (its checks' "not_graded",
// checks_not_graded), or "" when it is graded here.
std::string not_graded_here(const GradeReport& r) {
  for (const auto& s : r.steps)
    if (r.current_step && s.id == *r.current_step)
      for (const auto& c : s.checks)
        if (c.data.contains("not_graded")) return c.data["not_graded"].get<std::string>();
  return "";
}

}  // namespace

namespace {

// Which thresholds the timed checks used (calibration.hpp), and the line the header shows.
json calibration_use_json(const CalibrationUse& u) {
  return {{"state", name_of(u.state)},
          {"gpu", u.gpu},
          {"file", u.file.string()},
          {"design_gpu", u.design_gpu},
          {"uncalibrated_checks", u.uncalibrated_checks},
          {"summary", u.header()}};
}

CalibrationUse calibration_use_from_json(const json& j) {
  CalibrationUse u;
  if (!j.is_object()) return u;  // reports written before it existed have none
  const std::string state = j.value("state", "no_gpu");
  for (const auto s : {CalibrationUse::State::no_gpu, CalibrationUse::State::calibrated,
                       CalibrationUse::State::design_card, CalibrationUse::State::uncalibrated})
    if (name_of(s) == state) u.state = s;
  u.gpu = j.value("gpu", "");
  u.file = j.value("file", "");
  u.design_gpu = j.value("design_gpu", "");
  u.uncalibrated_checks = j.value("uncalibrated_checks", std::vector<std::string>{});
  return u;
}

}  // namespace

json report_to_json(const GradeReport& r) {
  json steps = json::array();
  for (const auto& s : r.steps) {
    json checks = json::array();
    for (const auto& c : s.checks) checks.push_back(check_json(c));
    steps.push_back({{"id", s.id},
                     {"title", s.title},
                     {"points", s.points},
                     {"status", s.status},
                     {"checks", checks},
                     {"symptom_hint", s.symptom_hint}});
  }
  json device = nullptr;
  if (r.device.present)
    device = {{"name", r.device.name},
              {"arch", r.device.arch},
              {"sms", r.device.sms},
              {"driver", cuda_version_string(r.device.driver_version)}};
  return {{"schema", "cuda-memory-labs/grade/1"},
          {"lab", r.lab_folder},
          {"title", r.title},
          {"submission", r.submission},
          {"seed", r.seed},
          {"arch", r.arch},
          {"gpu", device},
          {"no_gpu_reason", r.device.present ? "" : r.device.reason},
          {"build", {{"student", build_json(r.student_build)}}},
          // Correctness against driver.cu's float64 oracle, timing against its baseline: no solution is run.
          {"expected_from", "oracle"},
          {"steps", steps},
          {"current_step", r.current_step ? json(*r.current_step) : json(nullptr)},
          {"passed", r.exit_code == kExitPass},
          {"notes", r.notes},
          {"calibration", calibration_use_json(r.calibration)},
          {"program_output", r.program_output},
          {"seconds", r.seconds},
          {"exit_code", r.exit_code}};
}

namespace {
CheckResult check_from_json(const json& j) {
  CheckResult c;
  const std::string kind = j.at("kind").get<std::string>();
  const CheckKindTraits* traits = check_kind_traits(kind);
  if (!traits) throw std::runtime_error("a check of unknown kind \"" + kind + "\" in a grade report");
  c.kind = traits->kind;
  c.status = j.at("status").get<Outcome>();
  c.summary = j.at("summary").get<std::string>();
  c.details = j.at("details").get<std::vector<std::string>>();
  c.symptom = symptom_from_json(j.at("symptom"));
  c.data = j.at("data");
  c.advisory = j.value("advisory", false);  // reports written before it existed have none
  return c;
}
}  // namespace

GradeReport report_from_json(const json& j) {
  if (j.at("schema") != "cuda-memory-labs/grade/1")
    throw std::invalid_argument("not a grade report: " + j.at("schema").dump());
  GradeReport r;
  r.lab_folder = j.at("lab").get<std::string>();
  r.title = j.at("title").get<std::string>();
  r.submission = j.at("submission").get<std::string>();
  r.seed = j.at("seed").get<std::uint64_t>();
  r.arch = j.at("arch").get<std::string>();
  const json& gpu = j.at("gpu");
  r.device.present = !gpu.is_null();
  r.device.reason = j.at("no_gpu_reason").get<std::string>();
  if (r.device.present) {
    r.device.name = gpu.at("name").get<std::string>();
    r.device.arch = gpu.at("arch").get<std::string>();
    r.device.sms = gpu.at("sms").get<int>();
  }
  const json& build = j.at("build").at("student");
  r.student_build.ok = build.at("ok").get<bool>();
  r.student_build.cached = build.at("cached").get<bool>();
  r.student_build.seconds = build.at("seconds").get<double>();
  r.student_build.stage = build.at("stage").get<std::string>();
  r.student_build.diagnostics = build.at("diagnostics").get<std::string>();
  for (const json& s : j.at("steps")) {
    StepResult st;
    st.id = s.at("id").get<int>();
    st.title = s.at("title").get<std::string>();
    st.points = s.at("points").get<int>();
    st.status = s.at("status").get<Outcome>();
    for (const json& c : s.at("checks")) st.checks.push_back(check_from_json(c));
    st.symptom_hint = s.at("symptom_hint").get<std::string>();
    r.steps.push_back(std::move(st));
  }
  if (!j.at("current_step").is_null()) r.current_step = j.at("current_step").get<int>();
  r.notes = j.at("notes").get<std::vector<std::string>>();
  r.calibration = calibration_use_from_json(j.value("calibration", json()));
  r.program_output = j.at("program_output").get<std::string>();
  r.seconds = j.at("seconds").get<double>();
  r.exit_code = j.at("exit_code").get<int>();
  return r;
}

namespace {

// The last line of a report: what the grade comes to and what to do next.
void print_verdict_line(const GradeReport& r) {
  bool any_failed = false;
  for (const auto& s : r.steps) any_failed = any_failed || s.status == Outcome::fail;
  if (r.exit_code == kExitPass) {
    std::cout << "  " << Style::green("All steps pass.") << "\n";
  } else if (!r.student_build.ok) {
    std::cout << "  Fix the build error above, then grade again: no step is graded until kernel.cu builds.\n";
  } else if (!r.device.present && !any_failed) {
    // Nothing failed: what is left is what only a GPU can check.
    std::cout << "  " << Style::green("The static checks pass.") << " The other checks need a GPU: grade " << r.lab_id
              << " on a machine with one (grader doctor shows what this one has).\n";
  } else if (const std::string why = not_graded_here(r); !any_failed && !why.empty()) {
    // A step whose technique this GPU lacks: nothing to fix, and nothing to retry here.
    std::cout << "  Nothing failed. Step " << *r.current_step << " is not graded on this machine (" << why
              << "): grade " << r.lab_id << " on a GPU that has it for that step.\n";
  } else if (!any_failed && r.current_step) {
    // A tool failed on this machine (the skipped check above says which): no verdict yet.
    std::cout << "  Nothing failed, but step " << *r.current_step
              << " was not graded (the skipped check above says why): grade " << r.lab_id
              << " again. If it keeps happening, show " << Style::bold("grader doctor") << " to your instructor.\n";
  } else if (r.current_step) {
    std::cout << "  Current step: " << *r.current_step << ".  Stuck? " << Style::bold("grader hint " + r.lab_id)
              << "\n";
  }
}

}  // namespace

void print_report(const GradeReport& r, bool verbose) {
  std::cout << Style::bold(r.lab_folder) << "  " << r.title << "\n";
  std::cout << Style::dim("  " +
                          (r.device.present ? r.device.name + " (" + r.arch + ")" : "no GPU, building for " + r.arch) +
                          " · seed " + std::to_string(r.seed))
            << "\n";
  if (const std::string line = r.calibration.header(); !line.empty())
    std::cout << (r.calibration.state == CalibrationUse::State::uncalibrated ? Style::yellow("  " + line)
                                                                             : Style::dim("  " + line))
              << "\n";
  if (!r.student_build.ok) {
    std::cout << "\n  " << Style::fail_mark() << " " << Style::bold("kernel.cu does not build") << " ("
              << r.student_build.stage << ")\n\n"
              << indent(r.student_build.diagnostics, "    ") << "\n";
  }
  const auto charts = charts_by_step(r);
  for (std::size_t i = 0; i < r.steps.size(); ++i) {
    const StepResult& s = r.steps[i];
    std::cout << "\n  " << mark(s.status) << " " << Style::bold("step " + std::to_string(s.id)) << "  " << s.title;
    if (s.status == Outcome::locked)
      std::cout << Style::dim(r.student_build.ok ? "  (locked: pass the steps before it)"
                                                 : "  (not graded: kernel.cu does not build)");
    std::cout << "\n";
    for (const auto& c : s.checks) {
      std::cout << "      " << mark(c.status) << " " << Style::dim(name_of(c.kind) + ":") << " " << c.summary << "\n";
      for (const auto& d : c.details) std::cout << "          " << Style::dim(d) << "\n";
    }
    for (const json* session : charts[i]) std::cout << session_chart(*session, {32, Style::unicode(), "          "});
    if (!s.symptom_hint.empty()) std::cout << "      " << Style::yellow("→ ") << s.symptom_hint << "\n";
  }
  if (!r.program_output.empty()) {
    std::cout << "\n  " << Style::bold("your program printed:") << "\n" << indent(r.program_output, "    | ") << "\n";
  }
  for (const auto& n : r.notes) std::cout << "\n  " << Style::yellow("note: ") << n << "\n";
  std::cout << "\n";
  print_verdict_line(r);
  if (verbose)
    std::cout << Style::dim("  build " + std::string(r.student_build.cached ? "cached" : "fresh") + ", " +
                            std::to_string(r.seconds).substr(0, 5) + " s in all")
              << "\n";
}

}  // namespace grader
