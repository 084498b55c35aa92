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

std::string shown(const json& report) { return report.dump(1).substr(0, 6000); }

}  // namespace

bool FixtureExpectation::is_static() const {
  return kind == build_fails || (kind == step_fails && (check == "ptx" || check == "ptxas"));
}

FixtureExpectation parse_expectation(const std::string& source, const std::string& source_name) {
  static const std::regex line_re(R"(// expect: ([^\n]*))");
  static const std::regex step_re(R"(step (\d+) fails: ([a-z_]+)(?: \(([a-z_]+)\))?)");
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
  return e;
}

FixtureExpectation read_expectation(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ExpectationError("cannot read " + file.string());
  return parse_expectation(std::string(std::istreambuf_iterator<char>(in), {}), file.string());
}

const std::vector<std::string>& known_symptoms() {
  static const std::vector<std::string> s = {
      "mismatch",      "unwritten",        "canary", "timeout",      "crash", "cuda_error", "no_result",
      "forged_result", "implausibly_fast", "noisy",  "local_memory", "api",   "bad_output", "error"};
  return s;
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
    found = found || c.kind == e.check;
    if (kinds.find(c.kind) == std::string::npos) kinds += (kinds.empty() ? "" : ", ") + c.kind;
  }
  if (!found)
    return "\"" + e.text + "\" names a " + e.check + " check, but step " + std::to_string(e.step) + " checks only " +
           kinds;
  const auto& sy = known_symptoms();
  if (!e.symptom.empty() && std::find(sy.begin(), sy.end(), e.symptom) == sy.end()) {
    std::string all;
    for (const auto& x : sy) all += (all.empty() ? "" : ", ") + x;
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
    case FixtureExpectation::build_fails:
      return exit_code == 3 ? "" : "expected a build failure (exit 3), got exit " + code + ": " + shown(report);
    case FixtureExpectation::step_fails: {
      if (exit_code != 1) return "expected exit 1, got " + code + ": " + shown(report);
      const json* step = first_failing_step(report);
      if (!step || (*step).value("id", 0) != e.step)
        return "expected step " + std::to_string(e.step) + " to fail first: " + shown(report);
      for (const auto& c : (*step)["checks"])
        if (c.value("status", "") == "fail" && c.value("kind", "") == e.check &&
            (e.symptom.empty() || c.value("symptom", "") == e.symptom))
          return "";
      return "step " + std::to_string(e.step) + " failed, but not with " + e.check +
             (e.symptom.empty() ? "" : " (" + e.symptom + ")") + ": " + shown(report);
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
