#include "fixture_expectation.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <regex>

using nlohmann::json;

namespace grader {
namespace {

const json* first_failing_step(const json& report) {
  if (!report.contains("steps") || !report["steps"].is_array()) return nullptr;
  for (const auto& s : report["steps"])
    if (s.value("status", "") == "fail") return &s;
  return nullptr;
}

// "mismatch" also fits the two kinds of mismatch the grader tells apart
// (wrong only at the edges, different every run): a fixture written as
// "wrong values" stays right when the grader learns to say more about them.
bool symptom_fits(const std::string& expected, const std::string& seen) {
  if (expected == seen) return true;
  return expected == "mismatch" && (seen == "edge_mismatch" || seen == "nondeterministic");
}

std::string text_of(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

// What a grade did, briefly: each step's status and every check that did not
// pass with what it showed (a whole report, ncu's counters included, is too
// long for a test log to keep the part that matters).
std::string shown(const json& report) {
  if (!report.is_object() || !report.contains("steps") || !report["steps"].is_array())
    return report.dump(1).substr(0, 6000);
  std::string s = "exit " + std::to_string(report.value("exit_code", -1));
  for (const auto& step : report["steps"]) {
    s += "\nstep " + std::to_string(step.value("id", 0)) + ": " + text_of(step, "status");
    if (!step.contains("checks") || !step["checks"].is_array()) continue;
    for (const auto& c : step["checks"])
      if (text_of(c, "status") != "pass")
        s += "\n  " + text_of(c, "kind") + " " + text_of(c, "status") + " (" + text_of(c, "symptom") +
             "): " + text_of(c, "summary").substr(0, 800);
  }
  return s;
}

// What a failing check shows a student: its summary, then its details.
std::string shown_by(const json& check) {
  std::string s = text_of(check, "summary");
  if (check.contains("details") && check["details"].is_array())
    for (const auto& d : check["details"])
      if (d.is_string()) s += "\n" + d.get<std::string>();
  return s;
}

// The first expected message `text` lacks, or "" when it has them all.
std::string missing_message(const std::string& text, const std::vector<std::string>& messages) {
  for (const auto& m : messages)
    if (text.find(m) == std::string::npos) return m;
  return "";
}

}  // namespace

bool FixtureExpectation::is_static() const {
  const CheckKindTraits* t = check_kind_traits(check);
  return kind == build_fails || (kind == step_fails && t && t->is_static);
}

FixtureExpectation parse_expectation(const std::string& source, const std::string& source_name) {
  static const std::regex line_re(R"(// expect: ([^\n]*))");
  static const std::regex step_re(R"(step (\d+) fails: ([a-z_]+)(?: \(([a-z_]+)\))?)");
  static const std::regex message_re(R"((?:^|\n)// message: ([^\n]*))");
  std::smatch m;
  if (!std::regex_search(source, m, line_re))
    throw ExpectationError(source_name +
                           " has no \"// expect: \" line (e.g. // expect: step 1 fails: correct (mismatch))");
  FixtureExpectation e;
  e.text = m[1];
  // A trailing space or a CRLF line end is not part of the verdict.
  while (!e.text.empty() && (e.text.back() == ' ' || e.text.back() == '\r' || e.text.back() == '\t')) e.text.pop_back();
  std::smatch s;
  if (e.text == "all pass") {
    e.kind = FixtureExpectation::all_pass;
  } else if (e.text == "build fails") {
    e.kind = FixtureExpectation::build_fails;
  } else if (std::regex_match(e.text, s, step_re)) {
    e.kind = FixtureExpectation::step_fails;
    e.step = std::stoi(s[1]);
    e.check = s[2];
    e.symptom = s[3];
  } else {
    throw ExpectationError(source_name + ": cannot read the expectation \"" + e.text +
                           "\" (want \"build fails\", \"all pass\" or \"step N fails: KIND[ (SYMPTOM)]\")");
  }
  for (auto it = std::sregex_iterator(source.begin(), source.end(), message_re); it != std::sregex_iterator(); ++it) {
    std::string m = (*it)[1];
    while (!m.empty() && (m.back() == ' ' || m.back() == '\r' || m.back() == '\t')) m.pop_back();
    if (m.empty()) throw ExpectationError(source_name + ": an empty \"// message: \" line (it would match anything)");
    e.messages.push_back(m);
  }
  if (!e.messages.empty() && e.kind == FixtureExpectation::all_pass)
    throw ExpectationError(source_name + ": \"// message: \" lines with \"all pass\": no failure shows them");
  return e;
}

FixtureExpectation read_expectation(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ExpectationError("cannot read " + file.string());
  return parse_expectation(std::string(std::istreambuf_iterator<char>(in), {}), file.string());
}

std::string expectation_problem(const FixtureExpectation& e, const Manifest& manifest) {
  if (e.kind != FixtureExpectation::step_fails) return "";
  const Step* step = manifest.find_step(e.step);
  if (!step) {
    std::string ids;
    for (const auto& st : manifest.steps) ids += (ids.empty() ? "" : ", ") + std::to_string(st.id);
    return "\"" + e.text + "\" names step " + std::to_string(e.step) + ", but the lab's steps are " + ids;
  }
  std::string kinds;
  bool found = false;
  for (const auto& c : step->checks) {
    const std::string& name = name_of(c.kind);
    found = found || name == e.check;
    if (kinds.find(name) == std::string::npos) kinds += (kinds.empty() ? "" : ", ") + name;
  }
  if (!found)
    return "\"" + e.text + "\" names a " + e.check + " check, but step " + std::to_string(e.step) + " checks only " +
           kinds;
  if (!e.symptom.empty() && !symptom_named(e.symptom)) {
    std::string all;
    for (Symptom x : kEverySymptom) all += std::string(all.empty() ? "" : ", ") + name_of(x);
    return "\"" + e.text + "\" names the symptom " + e.symptom + ", which no check reports (known: " + all + ")";
  }
  return "";
}

std::string verdict_mismatch(const json& report, int exit_code, const FixtureExpectation& e) {
  if (!report.is_object()) return "no grade report";
  const std::string code = std::to_string(exit_code);
  switch (e.kind) {
    case FixtureExpectation::all_pass:
      return exit_code == 0 ? "" : "expected every step to pass, got exit " + code + ": " + shown(report);
    case FixtureExpectation::build_fails: {
      if (exit_code != 3) return "expected a build failure (exit 3), got exit " + code + ": " + shown(report);
      const std::string diagnostics = report.contains("build") && report["build"].is_object()
                                          ? text_of(report["build"].value("student", json()), "diagnostics")
                                          : "";
      const std::string lacks = missing_message(diagnostics, e.messages);
      if (!lacks.empty())
        return "the build failed, but its diagnostics do not contain \"" + lacks + "\":\n" + diagnostics;
      return "";
    }
    case FixtureExpectation::step_fails: {
      if (exit_code != 1) return "expected exit 1, got " + code + ": " + shown(report);
      const json* step = first_failing_step(report);
      if (!step || (*step).value("id", 0) != e.step)
        return "expected step " + std::to_string(e.step) + " to fail first: " + shown(report);
      const std::string verdict = e.check + (e.symptom.empty() ? "" : " (" + e.symptom + ")");
      bool matched = false;
      std::string lacks, seen;
      for (const auto& c : (*step)["checks"]) {
        if (c.value("status", "") != "fail" || c.value("kind", "") != e.check ||
            (!e.symptom.empty() && !symptom_fits(e.symptom, c.value("symptom", ""))))
          continue;
        // Any one check of the verdict showing every message will do.
        matched = true;
        seen = shown_by(c);
        lacks = missing_message(seen, e.messages);
        if (lacks.empty()) return "";
      }
      if (matched)
        return "step " + std::to_string(e.step) + " failed with " + verdict + ", but it does not say \"" + lacks +
               "\":\n" + seen;
      return "step " + std::to_string(e.step) + " failed, but not with " + verdict + ": " + shown(report);
    }
  }
  return "unknown expectation";
}

std::string static_verdict_mismatch(const json& report, int exit_code, const FixtureExpectation& e) {
  if (e.is_static()) return verdict_mismatch(report, exit_code, e);
  if (!report.is_object()) return "no grade report";
  if (exit_code == 3) return "expected it to build, but it does not: " + shown(report);
  const json* step = first_failing_step(report);
  if (step && e.kind == FixtureExpectation::all_pass)
    return "expected every step to pass, but step " + std::to_string(step->value("id", 0)) +
           " fails a static check: " + shown(report);
  if (step && step->value("id", 0) < e.step)
    return "expected step " + std::to_string(e.step) + " to fail first (on a GPU), but step " +
           std::to_string(step->value("id", 0)) + " already fails a static check: " + shown(report);
  if (step && exit_code != 1)
    return "a step fails, yet the exit code is " + std::to_string(exit_code) + ": " + shown(report);
  if (!step && exit_code != 0 && exit_code != 4)
    return "no step fails, yet the exit code is " + std::to_string(exit_code) + ": " + shown(report);
  return "";
}

}  // namespace grader
